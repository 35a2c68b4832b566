module.exports = {
  displayName: 'records-publication',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
