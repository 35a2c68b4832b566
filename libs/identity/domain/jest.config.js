module.exports = {
  displayName: 'identity-domain',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
