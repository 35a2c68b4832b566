module.exports = {
  displayName: 'identity-data-access',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
